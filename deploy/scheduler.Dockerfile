# The brigade scheduler image deploy/kubernetes/scheduler/deployment.yaml
# runs. From the repository root:
#   docker build -f deploy/scheduler.Dockerfile -t ghcr.io/OWNER/brigade-kube:latest .
#   docker push ghcr.io/OWNER/brigade-kube:latest
# The scheduler is the kube module (its own go.mod, which points at the
# repository root for the policies); it needs no cgo.
FROM golang:1.26 AS build
WORKDIR /src
COPY . .
RUN cd kube && CGO_ENABLED=0 go build -trimpath -o /out/brigade-kube ./cmd/brigade-kube

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/brigade-kube /brigade-kube
ENTRYPOINT ["/brigade-kube"]
