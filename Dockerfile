# The Lethe worker and starter. Chromium (headless fetching), ffmpeg (media
# to WAV for whisper.cpp) and poppler-utils (PDF text) come from Debian.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o /out/worker ./worker && CGO_ENABLED=0 go build -o /out/starter ./starter

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends \
      chromium ffmpeg poppler-utils ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/worker /out/starter /usr/local/bin/
COPY testdata/corpus /corpus
ENV LETHE_RESEARCH_CORPUS_DIR=/corpus LETHE_GRAPH_PATH=/data/graph.db LETHE_TELEMETRY_METRICS_ADDR=0.0.0.0:9464
VOLUME /data
EXPOSE 9464
ENTRYPOINT ["/usr/local/bin/worker"]
