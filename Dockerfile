# Image of every fleet process (see docker-compose.yml and Procfile).
FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends rsync ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY scripts ./scripts
RUN npm ci && npm prune --omit=dev
ENV NODE_ENV=production
ENTRYPOINT ["node", "bin/fleet.js"]
