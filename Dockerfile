# Container image for releases: goreleaser puts the static, already built
# binary in the build context (see .goreleaser.yaml, dockers).
#   docker run --rm ghcr.io/gpufinops/gpufinops analyze --demo
# With AWS credentials from the environment or a mounted ~/.aws:
#   docker run --rm -e AWS_PROFILE -v ~/.aws:/home/nonroot/.aws:ro \
#     ghcr.io/gpufinops/gpufinops analyze --provider aws
FROM gcr.io/distroless/static-debian12:nonroot
COPY gpufinops /usr/local/bin/gpufinops
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/gpufinops"]
