"""``kubeloop demo``: a short live demonstration of the work queue."""

from __future__ import annotations

import click


@click.command()
def demo() -> None:
    """Run a short live demo of the work queue."""
    click.echo("kubeloop work queue demo")
