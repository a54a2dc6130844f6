# The scorer as a container, for compose.yaml: `node bin/fraud-scorer.js serve`.
# Build stage: `npm ci` needs the dev dependencies once, to generate the Protobuf code.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY scripts ./scripts
COPY proto ./proto
RUN npm ci && npm prune --omit=dev

FROM node:22-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
COPY --from=build /app/src/codec/generated ./src/codec/generated
COPY proto ./proto
COPY models ./models
COPY rules ./rules
USER node
EXPOSE 9464
CMD ["node", "bin/fraud-scorer.js", "serve"]
