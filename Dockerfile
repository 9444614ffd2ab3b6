# syntax=docker/dockerfile:1
# One image for both programs. The first argument picks the program (both are console scripts
# of pyproject.toml on PATH); there is deliberately no ENTRYPOINT so that no shell is needed:
#   docker run IMAGE promscaler-adapter --prometheus-url=http://prometheus:9090 ...
#   docker run IMAGE promscaler-autoscaler run --leader-elect ...
# The Helm chart sets `args: [promscaler-adapter, ...]` / `args: [promscaler-autoscaler, run, ...]`.
# Without a registry, `make image` builds this same file on a local stand-in for PYTHON_IMAGE
# made from Debian's packages (scripts/image-base.sh); see docs/install.md.

ARG PYTHON_IMAGE=python:3.11.14-slim-bookworm

# --- requirements: the runtime dependencies of pyproject.toml, as a requirements file. Only
# this file reaches the next stage, so a pyproject change that leaves the dependencies alone
# (the version, tool settings) keeps the dependency layers cached.
FROM ${PYTHON_IMAGE} AS requirements
COPY pyproject.toml /src/pyproject.toml
RUN python -c 'import tomllib; p = tomllib.load(open("/src/pyproject.toml", "rb")); print(*p["project"]["dependencies"], sep="\n")' > /requirements.txt \
 && python -c 'import tomllib; p = tomllib.load(open("/src/pyproject.toml", "rb")); print(*p["build-system"]["requires"], sep="\n")' > /build-requirements.txt

# --- deps: a venv with the runtime dependencies only (no extras: dev and tools never reach the
# image), before any source is copied, so a source change does not reinstall them.
FROM ${PYTHON_IMAGE} AS deps
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
COPY --from=requirements /requirements.txt /build-requirements.txt /tmp/
RUN python -m venv /opt/promscaler \
 && /opt/promscaler/bin/pip install --no-compile -r /tmp/requirements.txt -r /tmp/build-requirements.txt \
 && site=$(/opt/promscaler/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))') \
 && echo /opt/promscaler/app > "$site/promscaler-app.pth"

# --- venv: what the runtime keeps of it. pip and the build backend go; so do files a runtime
# never reads: the dependencies' own test suites, C/Cython sources, type stubs, and the debug
# symbols some wheels ship in their extension modules (a third of the venv; binutils' strip
# comes from the base's own Debian archive and stays in this build stage).
FROM deps AS venv
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends binutils >/dev/null \
 && /opt/promscaler/bin/pip uninstall --yes pip setuptools \
 && site=$(/opt/promscaler/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))') \
 && find "$site" -depth -type d \( -name tests -o -name __pycache__ \) -exec rm -rf {} + \
 && find "$site" -type f \( -name '*.pyx' -o -name '*.pxd' -o -name '*.pyi' -o -name '*.c' -o -name '*.h' \) -delete \
 && find "$site" -type f -name '*.so' -exec strip --strip-debug {} +

# --- app: the project itself, in its own directory (found through promscaler-app.pth), its two
# console scripts, and the compiled bytecode of every module the programs import at start.
FROM deps AS app
COPY pyproject.toml README.md /src/
COPY adapter /src/adapter
COPY autoscaler /src/autoscaler
COPY common /src/common
COPY scripts/image_pycache.py /src/scripts/image_pycache.py
# The sandbox (test tooling, never imported by the programs) is not in the build context; its
# console script would only fail there, so it goes. The bytecode lives in a separate tree
# (PYTHONPYCACHEPREFIX): the root filesystem is read-only at run time, and without it every
# start compiles the same modules again.
RUN /opt/promscaler/bin/pip install --no-deps --no-build-isolation --no-compile \
        --target /opt/promscaler/app /src \
 && mv /opt/promscaler/app/bin /app-bin \
 && rm -f /app-bin/promscaler-sandbox \
 && PYTHONPYCACHEPREFIX=/opt/promscaler/pycache /opt/promscaler/bin/python -B /src/scripts/image_pycache.py

# --- runtime: the same base, the venv, the project, a numeric non-root user --------------------
FROM ${PYTHON_IMAGE}
ARG VERSION=0.2.0
LABEL org.opencontainers.image.title="promscaler" \
      org.opencontainers.image.description="Custom/external metrics adapter for Prometheus and an HPA-exact autoscaler with scale to zero" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/promscaler/promscaler"
ENV PATH=/opt/promscaler/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONPYCACHEPREFIX=/opt/promscaler/pycache \
    PYTHONUNBUFFERED=1
# largest and least often changed first: a source change rebuilds only the last three layers
COPY --from=venv /opt/promscaler /opt/promscaler
COPY --from=app /app-bin/ /opt/promscaler/bin/
COPY --from=app /opt/promscaler/app /opt/promscaler/app
COPY --from=app /opt/promscaler/pycache /opt/promscaler/pycache
# 65532 is the conventional "nonroot" id; numeric so runAsNonRoot can verify it.
USER 65532:65532
WORKDIR /tmp
EXPOSE 6443 8080
CMD ["promscaler-adapter", "--help"]
