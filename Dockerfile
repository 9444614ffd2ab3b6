# syntax=docker/dockerfile:1
# One image for both programs. The first argument picks the program (both are console scripts
# of pyproject.toml on PATH); there is deliberately no ENTRYPOINT so that no shell is needed:
#   docker run IMAGE promscaler-adapter --prometheus-url=http://prometheus:9090 ...
#   docker run IMAGE promscaler-autoscaler run --leader-elect ...
# The Helm chart sets `args: [promscaler-adapter, ...]` / `args: [promscaler-autoscaler, run, ...]`.

ARG PYTHON_IMAGE=python:3.11.14-slim-bookworm

# --- build: a wheel of the project, then a venv with it and its runtime dependencies only
# (no extras: the dev and tools extras never reach the image; pip and setuptools are removed).
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY adapter ./adapter
COPY autoscaler ./autoscaler
COPY common ./common
COPY sandbox ./sandbox
RUN python -m pip wheel --no-deps --wheel-dir /dist . \
 && python -m venv /opt/promscaler \
 && /opt/promscaler/bin/pip install /dist/promscaler-*.whl \
 && /opt/promscaler/bin/pip uninstall --yes pip setuptools

# --- runtime: the same base, the venv, a numeric non-root user --------------------------------
FROM ${PYTHON_IMAGE}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="promscaler" \
      org.opencontainers.image.description="Custom/external metrics adapter for Prometheus and an HPA-exact autoscaler with scale to zero" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/promscaler/promscaler"
ENV PATH=/opt/promscaler/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
COPY --from=build /opt/promscaler /opt/promscaler
# 65532 is the conventional "nonroot" id; numeric so runAsNonRoot can verify it.
USER 65532:65532
WORKDIR /tmp
EXPOSE 6443 8080
CMD ["promscaler-adapter", "--help"]
