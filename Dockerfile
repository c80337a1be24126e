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
# The worker runs pages, PDFs and media from the open web through Chromium,
# pdftotext and ffmpeg: it runs as an unprivileged user, so that Chromium
# keeps its sandbox (the research code adds --no-sandbox only for root) and
# a parser exploit does not start out as root in the container. The user
# owns only its data directory and its home (Chromium's profile, temp
# files under TMPDIR).
RUN groupadd --system --gid 10001 lethe \
 && useradd --system --uid 10001 --gid lethe --home-dir /home/lethe --create-home --shell /usr/sbin/nologin lethe \
 && mkdir -p /data /home/lethe/tmp \
 && chown -R lethe:lethe /data /home/lethe
COPY --from=build /out/worker /out/starter /usr/local/bin/
COPY testdata/corpus /corpus
ENV LETHE_RESEARCH_CORPUS_DIR=/corpus LETHE_GRAPH_PATH=/data/graph.db LETHE_TELEMETRY_METRICS_ADDR=0.0.0.0:9464 \
    HOME=/home/lethe TMPDIR=/home/lethe/tmp
# A named volume mounted here starts as a copy of this directory, owned by
# lethe.
VOLUME /data
EXPOSE 9464
USER lethe:lethe
ENTRYPOINT ["/usr/local/bin/worker"]
