# The scorer as a container, for compose.yaml: `node bin/fraud-scorer.js serve`.
# Build stage: the dev dependencies once, to generate the Protobuf code and bundle dist/.
FROM node:22-bookworm-slim AS build
WORKDIR /app
# package.json's allowScripts keeps onnxruntime-node from fetching CUDA binaries on npm 11.16+;
# this says the same to the npm 10 in node images.
ENV ONNXRUNTIME_NODE_INSTALL=skip
COPY package.json package-lock.json .npmrc ./
COPY scripts ./scripts
COPY proto ./proto
RUN npm ci
COPY tsconfig.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

# Runtime: bundled JavaScript and production dependencies only (no src/, no tsx). The file
# set is exactly these COPY lines; test/integration/containerFileSet.test.ts assembles it from
# them and starts the command there.
FROM node:22-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY proto ./proto
COPY models ./models
COPY rules ./rules
USER node
EXPOSE 9464
CMD ["node", "bin/fraud-scorer.js", "serve"]
