"""``kubeloop webhook``: OpenKruise's CloneSet and pod admission, served as AdmissionReview v1.

For real clusters, where kube-apiserver knows nothing of CloneSets: it serves the routes of
:mod:`kubeloop.webhook.configuration` over HTTPS, after making sure its certificate Secret
exists (creating or renewing it) and that both webhook configurations carry its CA as
``caBundle``; both are checked again every ``--resync-period`` seconds. SIGTERM or SIGINT
stops it. See docs/webhook-server.md.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from pathlib import Path

import click

from kubeloop.cli.controllers import (
    HARD_STOP_SECONDS,
    LOG_FORMAT,
    check_cluster,
    kubeconfig_option,
    load_client_config,
    stop_on_signals,
)
from kubeloop.webhook.configuration import CERT_SECRET, CONTAINER_PORT, DEFAULT_NAMESPACE

log = logging.getLogger("kubeloop.webhook")


async def _run(kubeconfig: Path | None, namespace: str, port: int, bind_address: str | None, cert_dir: Path,
               resync_period: float) -> None:
    from kubeloop.client import ApiClient, ApiException
    from kubeloop.webhook import provision
    from kubeloop.webhook.serve import WebhookServer, keep_current

    async with ApiClient(load_client_config(kubeconfig)) as client:
        await check_cluster(client)
        try:
            artifacts = await provision.ensure_certificate(client, namespace)
        except ApiException as error:
            raise click.ClickException(f"cannot read or write the secret {namespace}/{CERT_SECRET}: {error}") from None
        server = WebhookServer(client, namespace, cert_dir, port, bind_address)
        server.use(artifacts)
        await server.start()
        try:
            with stop_on_signals(HARD_STOP_SECONDS) as stop:
                try:
                    missing = await provision.ensure_ca_bundles(client, artifacts.ca_cert)
                except ApiException as error:
                    raise click.ClickException(f"cannot set the webhook configurations' caBundle: {error}") from None
                for name in missing:
                    log.warning("webhook configuration %s not found; its caBundle will be set once it exists", name)
                click.echo(f"kubeloop webhook serving on port {port} (namespace {namespace})", err=True)
                await keep_current(server, stop, resync_period)
        finally:
            await server.stop()
    click.echo("kubeloop webhook stopped", err=True)


@click.command()
@kubeconfig_option
@click.option("--namespace", default=DEFAULT_NAMESPACE, show_default=True,
              help="The install namespace: where the certificate Secret and the webhook Service are.")
@click.option("--port", default=CONTAINER_PORT, show_default=True, type=click.IntRange(1, 65535),
              help="HTTPS port to serve the webhooks on.")
@click.option("--bind-address", default=None, help="Address to listen on (default: every interface).")
@click.option("--cert-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory the serving certificate and key are written to (default: a private temporary one).")
@click.option("--resync-period", default=60.0, show_default=True, type=click.FloatRange(0.1),
              help="Seconds between checks of the certificate Secret and the configurations' caBundle.")
def webhook(kubeconfig: Path | None, namespace: str, port: int, bind_address: str | None, cert_dir: Path | None,
            resync_period: float) -> None:
    """Serve CloneSet defaulting and validation and the pod launch-priority mutation (AdmissionReview v1)."""
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    if cert_dir is not None:
        asyncio.run(_run(kubeconfig, namespace, port, bind_address, cert_dir, resync_period))
        return
    with tempfile.TemporaryDirectory(prefix="kubeloop-webhook-certs-") as directory:
        asyncio.run(_run(kubeconfig, namespace, port, bind_address, Path(directory), resync_period))
