# zkelect: a static binary on a small base with a shell (shards --exec runs
# its template with /bin/sh -c), running as a non-root user.
#
#   docker build -t zkelect:local --build-arg VERSION=$(git describe --always) .
#
# The default target (the last stage, "zkelect") carries zkelect alone. The
# "playground" target adds zkelect-dev, whose `demo store` and `demo worker`
# the docker-compose playground runs (zkelect-dev links test code, which the
# zkelect binary leaves out):
#
#   docker build --target playground -t zkelect-playground:local .

FROM golang:1.26-alpine AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/zkelect/zkelect/cmd/zkelect/internal/cli.version=${VERSION}" \
      -o /out/zkelect ./cmd/zkelect && \
    CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/zkelect/zkelect/cmd/zkelect/internal/cli.version=${VERSION}" \
      -o /out/zkelect-dev ./cmd/zkelect/zkelect-dev

FROM alpine:3.21 AS base
RUN addgroup -S -g 10001 zkelect && adduser -S -u 10001 -G zkelect -H zkelect
COPY --from=build /out/zkelect /usr/local/bin/zkelect
USER 10001:10001
EXPOSE 9464
ENTRYPOINT ["/usr/local/bin/zkelect"]
CMD ["--help"]

FROM base AS playground
COPY --from=build /out/zkelect-dev /usr/local/bin/zkelect-dev

FROM base AS zkelect
