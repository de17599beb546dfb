"""``python -m kubeloop`` runs the ``kubeloop`` command."""

from kubeloop.cli.main import main

main()
