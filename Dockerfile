# zkelect: a static binary on a small base with a shell (shards --exec runs
# its template with /bin/sh -c), running as a non-root user.
#
#   docker build -t zkelect:local --build-arg VERSION=$(git describe --always) .

FROM golang:1.26-alpine AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/zkelect ./cmd/zkelect

FROM alpine:3.21
RUN addgroup -S -g 10001 zkelect && adduser -S -u 10001 -G zkelect -H zkelect
COPY --from=build /out/zkelect /usr/local/bin/zkelect
USER 10001:10001
EXPOSE 9464
ENTRYPOINT ["/usr/local/bin/zkelect"]
CMD ["--help"]
