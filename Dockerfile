# Container image for releases: goreleaser (dockers_v2 in .goreleaser.yaml)
# builds it with buildx for each platform, the static binary it built for
# that platform in the context at $TARGETPLATFORM/gpufinops.
#   docker run --rm ghcr.io/gpufinops/gpufinops analyze --demo
# With AWS credentials from the environment or a mounted ~/.aws:
#   docker run --rm -e AWS_PROFILE -v ~/.aws:/home/nonroot/.aws:ro \
#     ghcr.io/gpufinops/gpufinops analyze --provider aws
FROM gcr.io/distroless/static-debian12:nonroot
ARG TARGETPLATFORM
COPY $TARGETPLATFORM/gpufinops /usr/local/bin/gpufinops
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/gpufinops"]
