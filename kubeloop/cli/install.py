"""``kubeloop manifests``: print the manifests that install kubeloop's controllers and webhook
in a cluster (:mod:`kubeloop.install`), as multi-document YAML for ``kubectl apply -f -``.

Everything by default; ``--crds-only`` or ``--rbac-only`` for a part. ``--controllers`` selects
the controllers the Deployment runs and the ClusterRole grants (CloneSet only by default;
``'*'`` for all of them).
"""

from __future__ import annotations

import click


@click.command()
@click.option("--crds-only", is_flag=True, help="Only the CustomResourceDefinitions.")
@click.option("--rbac-only", is_flag=True, help="Only the ServiceAccount, roles and bindings.")
@click.option("--image", default=None, help="The kubeloop image the Deployment runs (default kubeloop:VERSION).")
@click.option("--namespace", default=None, help="The namespace to install into (default kubeloop-system).")
@click.option("--controllers", "controllers_text", default="cloneset", show_default=True, metavar="LIST",
              help="Comma-separated controllers to run and grant ('*' for all of them).")
@click.option("--replicas", type=click.IntRange(1), default=None, help="Manager replicas (default 2; one leads).")
def manifests(crds_only: bool, rbac_only: bool, image: str | None, namespace: str | None, controllers_text: str,
              replicas: int | None) -> None:
    """Print the install manifests (CRDs, RBAC, Deployment, webhook) as YAML."""
    from kubeloop.cli.controllers import controller_names
    from kubeloop.install import InstallOptions, crds, install_manifests, rbac_manifests
    from kubeloop.install.render import to_yaml

    if crds_only and rbac_only:
        raise click.UsageError("--crds-only and --rbac-only exclude each other")
    defaults = InstallOptions()
    options = InstallOptions(namespace=namespace or defaults.namespace, image=image or defaults.image,
                             controllers=controller_names(controllers_text),
                             replicas=replicas or defaults.replicas)
    if crds_only:
        objects = crds()
    elif rbac_only:
        objects = rbac_manifests(options)
    else:
        objects = install_manifests(options)
    click.echo(to_yaml(objects), nl=False)
