"""A fake exec credential plugin for the client tests.

Run as ``python fake_exec_plugin.py <counter-file>``. Every run increments the number in the
counter file and prints an ExecCredential whose token is ``token-<run>``. Environment:

- ``FAKE_EXEC_MODE``: ``token`` (default), ``cert`` (client certificate from
  ``FAKE_EXEC_CERT`` / ``FAKE_EXEC_KEY`` files), ``fail`` (exit 3), ``garbage`` (not JSON),
  ``wrong-version`` (answers with v1alpha1);
- ``FAKE_EXEC_EXPIRY``: ``expirationTimestamp`` to return (omitted when unset);
- ``FAKE_EXEC_INFO_OUT``: file to copy ``KUBERNETES_EXEC_INFO`` into, plus a line telling
  whether standard input was a terminal and what it held.
"""

import json
import os
import sys


def main() -> int:
    counter = sys.argv[1]
    runs = 0
    if os.path.exists(counter):
        with open(counter) as handle:
            runs = int(handle.read() or 0)
    runs += 1
    with open(counter, "w") as handle:
        handle.write(str(runs))
    info_out = os.environ.get("FAKE_EXEC_INFO_OUT")
    if info_out:
        with open(info_out, "w") as handle:
            handle.write(os.environ.get("KUBERNETES_EXEC_INFO", "") + "\n")
            handle.write(json.dumps({"stdin_tty": sys.stdin.isatty(), "stdin": sys.stdin.read(),
                                     "extra": os.environ.get("FAKE_EXTRA", "")}) + "\n")
    mode = os.environ.get("FAKE_EXEC_MODE", "token")
    info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
    version = info["apiVersion"]
    if mode == "fail":
        print("plugin says no", file=sys.stderr)
        return 3
    if mode == "garbage":
        print("this is not json")
        return 0
    if mode == "wrong-version":
        version = "client.authentication.k8s.io/v1alpha1"
    status: dict[str, str] = {}
    if mode == "cert":
        with open(os.environ["FAKE_EXEC_CERT"]) as handle:
            status["clientCertificateData"] = handle.read()
        with open(os.environ["FAKE_EXEC_KEY"]) as handle:
            status["clientKeyData"] = handle.read()
    else:
        status["token"] = f"token-{runs}"
    expiry = os.environ.get("FAKE_EXEC_EXPIRY")
    if expiry:
        status["expirationTimestamp"] = expiry
    print(json.dumps({"kind": "ExecCredential", "apiVersion": version, "status": status}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
