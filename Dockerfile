# The kubeloop image: `kubeloop controllers` and `kubeloop webhook` (see deploy/ and
# docs/run-in-your-cluster.md). Build: docker build -t kubeloop:0.1.0 .
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY pyproject.toml README.md ./
COPY kubeloop ./kubeloop
# pip compiles the modules as it installs them: the root filesystem is read-only at run time.
RUN pip install . && rm -rf /src

# A numeric user, so the kubelet can check runAsNonRoot without a passwd entry.
USER 65532:65532
WORKDIR /tmp
ENTRYPOINT ["kubeloop"]
CMD ["--help"]
