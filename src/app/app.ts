// Composition root: one database, one router of services with the
// interceptors every call passes, one listener. Nothing here has logic of its own.
import { createConnectRouter } from "@connectrpc/connect";
import { readFileSync } from "node:fs";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { createSecureContext } from "node:tls";
import { createJwtVerifier } from "../auth/jwt.js";
import { authInterceptor, createAuthenticator } from "../auth/authenticate.js";
import { PublicKeyGate } from "../auth/public-keys.js";
import { underSetting, type Named } from "../config/operator-error.js";
import { unknownVariables, unknownVariableWarning, type Settings } from "../config/settings.js";
import { Health } from "../gen/grpc/health/v1/health_pb.js";
import { FeatureStatusService } from "../gen/meridian/featurestatus/v1/feature_status_pb.js";
import { MessageDeliveryService } from "../gen/meridian/featurestatus/v1/message_delivery_pb.js";
import { TimeSeriesService } from "../gen/meridian/timeseries/v1/time_series_pb.js";
import { createLogger, type Logger } from "../log/logger.js";
import type { Db } from "../sqlite/database.js";
import { openBackend, type Backend } from "./backend.js";
import { Availability } from "./availability.js";
import { durableAnswersInterceptor } from "../transport/durable-answers.js";
import { databaseRetryInterceptor } from "../transport/database-retry-interceptor.js";
import { CursorSeal } from "../kernel/cursor-seal.js";
import { isBusy } from "../kernel/database-busy.js";
import { startCleanup } from "../featurestatus/messages/cleanup.js";
import { featureStatusService } from "../featurestatus/feature-status-service.js";
import { ACTIVE_MESSAGE_READS } from "../featurestatus/messages/access.js";
import { Sanitizer } from "../featurestatus/messages/sanitize.js";
import { ACTIVE_SET_EVENTS } from "../featurestatus/live/watch-stream.js";
import { messageDeliveryService } from "../featurestatus/message-delivery-service.js";
import { MessageListings } from "../featurestatus/listings/message-listings.js";
import { ChangeBus } from "../featurestatus/live/change-bus.js";
import { MessageWrites } from "../featurestatus/messages/message-writes.js";
import { nowSeconds } from "../featurestatus/messages/message-fields.js";
import { startWebhookDelivery } from "../featurestatus/webhooks/webhook-delivery.js";
import { WebhookHosts } from "../featurestatus/webhooks/webhook-addresses.js";
import { Cors } from "../transport/cors.js";
import { CONNECT_COMPRESSIONS } from "../transport/compression.js";
import { apiVersionInterceptor } from "../http/api-version.js";
import { errorInterceptor } from "../transport/error-interceptor.js";
import { HealthState, healthService } from "../transport/health.js";
import { listen, type Listener } from "../transport/listener.js";
import { createNodeHandler } from "../transport/node-handler.js";
import { ServiceRegistry } from "../transport/service-registry.js";
import { sseDelivery } from "../transport/sse-delivery.js";
import { ClientAddress } from "../http/client-address.js";
import { addReflection } from "../transport/reflection.js";
import { Metrics } from "../metrics/metrics.js";
import { VERSION } from "../version.js";
import { listenForMetrics } from "../metrics/metrics-listener.js";
import { timeSeriesService } from "../timeseries/time-series-service.js";
import { documentTimeSeriesRest } from "../timeseries/time-series-rest-docs.js";
import { documentFeatureStatusRest } from "../featurestatus/feature-status-rest-docs.js";
import { documentMessageDeliveryRest } from "../featurestatus/message-delivery-rest-docs.js";
import { addTimeSeriesJsonShapes } from "../timeseries/time-series-json-shapes.js";

export { VERSION };
/** The API's services (health and reflection aside): every one answers on every protocol. */
export const SERVED_SERVICES = [FeatureStatusService, MessageDeliveryService, TimeSeriesService] as const;
const DRAIN_MS = 10_000; // D32
const API_DESCRIPTION =
  "Feature status messages and time series, over REST (these paths), gRPC, gRPC-Web and Connect on the same port. " +
  "Errors are RFC 9457 problem details. The same schema is served by gRPC reflection.";

export interface Meridian {
  /** Where /metrics is served (D43), if anywhere. */
  readonly metricsUrl?: string;
  /** Where the data lives (D40). */
  readonly backend: Backend;
  /** Every write of a message, with its audit record, event and notification (for tests and tools). */
  readonly messageWrites: MessageWrites;
  /** Told after each change of the messages has committed (D46). */
  readonly messageChanges: ChangeBus;
  /** The SQLite connection; throws on PostgreSQL. */
  readonly db: Db;
  readonly address: AddressInfo;
  readonly url: string;
  readonly logger: Logger;
  /** Drains (D32): refuses new work, finishes requests in flight, closes the database. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Refuses a port another process holds, or a host this machine does not
 * have, before the database is opened or created (a failed start changes nothing, D56).
 */
/** Listens on the address once and lets go: a taken port or a wrong host is found before anything is created (port 0 checks the host). */
async function checkListenable(port: number, host: string): Promise<void> {
  const probe = createNetServer();
  await new Promise<void>((resolve, reject) => {
    probe.once("error", reject);
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/**
 * What start-up needs from files and ports, checked before the database is
 * opened or created; each failure names its setting (D56).
 */
async function checkBeforeDatabase(settings: Settings): Promise<void> {
  await underSetting("MERIDIAN_PORT", String(settings.port), () => checkListenable(settings.port, settings.host), hostSetting(settings));
  if (settings.tlsCert) {
    const cert = await underSetting("MERIDIAN_TLS_CERT", settings.tlsCert, () => readFileSync(settings.tlsCert));
    const key = await underSetting("MERIDIAN_TLS_KEY", settings.tlsKey, () => readFileSync(settings.tlsKey));
    await underSetting("MERIDIAN_TLS_CERT", settings.tlsCert, () => createSecureContext({ cert, key }));
  }
}

export async function startMeridian(settings: Settings, logger: Logger = createLogger(settings.logLevel)): Promise<Meridian> {
  for (const u of unknownVariables()) logger.warn({ variable: u.name, nearest: u.nearest }, unknownVariableWarning(u));
  await checkBeforeDatabase(settings);
  const verifyJwt = await underSetting("MERIDIAN_JWKS_FILE", settings.jwksFile, () => createJwtVerifier(jwtSettings(settings)));
  const metrics = settings.metrics.kind === "off" ? undefined : new Metrics();
  // Before the database: a taken metrics port stops start-up (D56) and leaves nothing behind.
  const metricsListener = await metricsListenerFor(metrics, settings, logger);
  const backend = await underSetting("MERIDIAN_DB", settings.db, () =>
    // Serve makes the folders of the default path only: a path the operator named must lie in an existing folder (issue 39 item 11).
    openBackend(settings, settings.given.has("MERIDIAN_DB") ? "file" : "file-and-folder"),
  ).catch(async (e: unknown) => {
    await metricsListener?.close();
    throw e;
  });
  // A new database where the operator expected theirs is the sign of a mistyped path: said where it shows.
  if (backend.created) logger.warn({ database: backend.where }, `created a new, empty database at ${backend.where}`);
  // D57: readiness asks the database; an outage is logged once at its start and once at its end.
  const availability = new Availability(
    () => backend.ping(),
    logger,
    () => health.touch(),
  );
  const health = new HealthState(availability);
  if (metrics) backend.onCommitGroup((writes) => metrics.commitGroups.observe(writes));
  const unlink = backend.onLink(() => void availability.check()); // lost: is it an outage? back: is it over?
  const shutdown = new AbortController();
  // D57: streams end as soon as the drain begins; the drain then waits for ordinary requests only.
  const streamsEnd = new AbortController();
  const services = SERVED_SERVICES;

  const interceptors = [
    errorInterceptor(logger),
    durableAnswersInterceptor(backend.durable),
    databaseRetryInterceptor({
      unavailable: backend.isUnavailable,
      onWait: () => metrics?.lockWaits.inc(),
      onUnavailable: () => availability.suspect(),
      waitLimitMs: backend.waitLimitMs,
    }),
    authInterceptor(),
    apiVersionInterceptor(),
  ];
  const router = createConnectRouter({
    interceptors,
    acceptCompression: [...CONNECT_COMPRESSIONS],
    shutdownSignal: shutdown.signal,
  });
  const registry = new ServiceRegistry(router, interceptors);
  registry.add(
    Health,
    healthService(
      health,
      services.map((s) => s.typeName),
    ),
  );
  const messages = backend.messages;
  // D46: told of every change of the messages after it commits, this process's and (PostgreSQL) other replicas'.
  const messageChanges = new ChangeBus((e) => logger.error({ err: e }, "a watcher of message changes failed"), messages);
  const messageWrites = new MessageWrites(messages, messageChanges);
  // One key seals message cursors (D21) and value cursors (D27); their bindings keep them apart.
  const cursors = new CursorSeal(backend.cursorKey);
  // One listing cache (D51) for the listings, the streams (D46) and the feeds (D63): each reads what the others computed.
  const listings = new MessageListings(
    messages,
    cursors,
    nowSeconds,
    settings.listingCacheMb * 1024 * 1024,
    metrics && ((event) => metrics.cache.inc({ event })),
  );
  registry.add(
    FeatureStatusService,
    featureStatusService({
      store: messages,
      writes: messageWrites,
      changes: messageChanges,
      listings,
      dismissals: backend.dismissals,
      sanitizer: new Sanitizer({ allowHttpLinks: settings.allowHttpLinks }),
      cursors,
      sse: sseDelivery(registry.json, ACTIVE_SET_EVENTS),
      maxWatchers: settings.maxWatchers,
      maxWatchersPerClient: settings.maxWatchersPerClient,
      maxWatcherQueuedBytes: settings.watcherQueueKb * 1024,
      onWatcherDropped: (client, queuedBytes) =>
        logger.warn(
          { watcher: client, queuedBytes },
          `dropped a message watcher (${client}) that did not read: ${queuedBytes} bytes waited for it (MERIDIAN_WATCHER_QUEUE_KB)`,
        ),
      stopSignal: streamsEnd.signal,
      heartbeatMs: settings.sseHeartbeatS * 1000,
      isUnavailable: backend.isUnavailable,
    }),
  );
  // D63, issue 39 item 2: the hosts a webhook may reach although internal, at registration and at each delivery.
  const webhookHosts = new WebhookHosts({ hosts: settings.webhookHosts, httpHosts: settings.webhookHttpHosts });
  registry.add(MessageDeliveryService, messageDeliveryService({ webhooks: backend.webhooks, listings, hosts: webhookHosts }));
  registry.add(
    TimeSeriesService,
    timeSeriesService({
      metadata: backend.metadata,
      blocks: backend.blocks,
      cursors,
      onRows: metrics && ((n) => metrics.valueRows.inc(n)),
      blockCacheBytes: settings.blockCacheMb * 1024 * 1024,
      onBlockCache: metrics && {
        event: (event) => metrics.blockCache.inc({ event }),
        bytes: (bytes) => metrics.blockCacheBytes.set(bytes),
      },
    }),
  );
  addTimeSeriesJsonShapes(registry);
  documentTimeSeriesRest(registry);
  documentFeatureStatusRest(registry);
  documentMessageDeliveryRest(registry);
  addReflection(registry, [Health, ...services]);

  const authenticate = createAuthenticator(backend.apiKeys, verifyJwt, backend.waitLimitMs, new PublicKeyGate(ACTIVE_MESSAGE_READS));
  const handler = createNodeHandler({
    services: registry,
    shutdownSignal: shutdown.signal,
    health,
    cors: new Cors(settings.corsOrigins, settings.corsHeaders, () => backend.apiKeys.publicOrigins()),
    logger,
    authenticate,
    metrics,
    publicMetrics: settings.metrics.kind === "public",
    clientAddress: new ClientAddress(settings.trustedProxies),
    // Proprietary, as package.json says (UNLICENSED): no licence is granted, so there is no licence text or SPDX identifier to name.
    apiInfo: { title: "Meridian", version: VERSION, description: API_DESCRIPTION, license: { name: "Proprietary" } },
  });
  let listener: Listener;
  try {
    listener = await underSetting("MERIDIAN_PORT", String(settings.port), () => listen(handler, settings), hostSetting(settings));
  } catch (e) {
    unlink();
    await metricsListener?.close();
    await backend.close();
    throw e;
  }
  const cleanup = startCleanup(
    { writes: messageWrites, store: messages },
    {
      intervalS: settings.cleanupIntervalS,
      retentionDays: settings.messageRetentionDays,
      auditRetentionDays: settings.auditRetentionDays,
      webhooks: backend.webhooks,
      logger,
      // With replicas on one PostgreSQL database, one of them runs it per interval (D22, D40).
      gate: (run) => backend.oncePerInterval("message-cleanup", settings.cleanupIntervalS, run),
      unavailable: backend.isUnavailable,
    },
  );
  // The run at start is over before start-up is (on PostgreSQL it is a round trip or two):
  // what it removes is never seen by a first request, whichever the backend.
  await cleanup.first;
  // D63: the clock's events and the outbox's deliveries; on PostgreSQL one replica delivers at a time.
  const delivery = startWebhookDelivery({
    store: backend.webhooks,
    timeEvents: (nowS) => messageWrites.recordTimeEvents(nowS),
    changes: messageChanges,
    json: registry.json,
    hosts: webhookHosts,
    logger,
    userAgent: `Meridian/${VERSION}`,
    onError: (e) => {
      // The database away or busy (an import's lock, D51) is routine: the next tick does the same work.
      if (!backend.isUnavailable(e) && !isBusy(e)) logger.error({ err: e }, "webhook delivery turn failed; the next one tries again");
    },
  });
  backend.serving(logger);
  health.set("serving");
  const url = `${listener.tls ? "https" : "http"}://${hostForUrl(listener.address)}:${listener.address.port}`;
  logger.info(
    { address: url, db: backend.where, version: VERSION, node: process.version },
    `Meridian ${VERSION} on Node ${process.version} listening on ${url}`,
  );

  let closing: Promise<void> | undefined;
  return {
    backend,
    messageWrites,
    messageChanges,
    metricsUrl: metricsListener?.url ?? (settings.metrics.kind === "public" ? `${url}/metrics` : undefined),
    get db() {
      if (!backend.sqlite) throw new Error("no SQLite database: MERIDIAN_DB is a PostgreSQL URL");
      return backend.sqlite;
    },
    address: listener.address,
    url,
    logger,
    close(graceMs = DRAIN_MS) {
      closing ??= (async () => {
        health.set("draining");
        streamsEnd.abort();
        cleanup.stop();
        await delivery.stop();
        await listener.close(graceMs);
        shutdown.abort();
        await metricsListener?.close();
        unlink();
        availability.stop();
        await backend.close();
        logger.info("Meridian stopped");
      })();
      return closing;
    },
  };
}

/**
 * The metrics' own listener (MERIDIAN_METRICS=[host:]port). A port that cannot
 * be had stops start-up (D56): serving on without metrics while that port
 * answers with another process's figures would mislead whoever scrapes it.
 * MERIDIAN_METRICS=off is the way to serve without them.
 */
async function metricsListenerFor(metrics: Metrics | undefined, settings: Settings, logger: Logger) {
  const m = settings.metrics;
  if (!metrics || m.kind !== "own") return undefined;
  const l = await underSetting("MERIDIAN_METRICS", `${m.host}:${m.port}`, () => listenForMetrics(metrics, m.host, m.port));
  logger.info({ metrics: l.url }, `metrics on ${l.url}`);
  return l;
}

/** Listening uses MERIDIAN_HOST too: an error about the host names it (operator-error.ts). */
function hostSetting(s: Settings): Named {
  return { setting: "MERIDIAN_HOST", value: s.host };
}

function jwtSettings(s: Settings) {
  return { secret: s.jwtSecret, jwksFile: s.jwksFile, issuer: s.jwtIssuer, audience: s.jwtAudience };
}

function hostForUrl(a: AddressInfo): string {
  return a.family === "IPv6" ? `[${a.address}]` : a.address;
}
