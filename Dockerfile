# efficiency-audit as a Docker action (action.yml). Multi-stage: a Rust builder, then a CUDA
# user-space runtime with Python for the audited code's benchmark.
#
# GitHub's Docker-action rules: no USER (the runner expects root to write /github/workspace and
# the file commands) and no WORKDIR (the runner sets --workdir /github/workspace).
# A Docker action cannot request --gpus; the GPU arrives only when the runner host's Docker
# daemon uses `default-runtime: nvidia` (see docs/github-action.md) and the variables below
# are set: `utility` injects NVML, `compute` the CUDA driver.

# bookworm (glibc 2.36) builds a binary that runs on Ubuntu 24.04 (glibc 2.39).
FROM rust:1.95-bookworm AS builder
# The whole context (see .dockerignore): the manifest names benches and data files that must
# be present even for a release build.
COPY . /src
RUN cargo build --release --locked --manifest-path /src/Cargo.toml \
 && install -m 0755 /src/target/release/efficiency-audit /usr/local/bin/efficiency-audit

FROM nvidia/cuda:12.6.3-runtime-ubuntu24.04
ENV NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    PYTHONUNBUFFERED=1
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git python3 python3-pip python3-venv \
 && rm -rf /var/lib/apt/lists/* \
 && git config --system --add safe.directory '*'
COPY --from=builder /usr/local/bin/efficiency-audit /usr/local/bin/efficiency-audit
ENTRYPOINT ["efficiency-audit"]
CMD ["audit", "."]
