"""The ``kubeloop`` command: a click group whose subcommands live in sibling modules."""

from __future__ import annotations

import click

from kubeloop._version import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="kubeloop", message="%(prog)s %(version)s")
def cli() -> None:
    """kubeloop: Kubernetes controllers in Python, with an embedded cluster."""


@cli.command()
def version() -> None:
    """Print the kubeloop version."""
    click.echo(f"kubeloop {__version__}")


def _register() -> None:
    # Subcommands are registered here, one module each, so that `--help` stays cheap.
    from kubeloop.cli import controllers, dashboard, demo, install, kubelet, server, up, watch, webhook

    cli.add_command(demo.demo)
    cli.add_command(server.server)
    cli.add_command(up.up)
    cli.add_command(kubelet.kubelet)
    cli.add_command(controllers.controllers)
    cli.add_command(dashboard.dashboard)
    cli.add_command(watch.watch)
    cli.add_command(install.manifests)
    cli.add_command(webhook.webhook)


_register()


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
