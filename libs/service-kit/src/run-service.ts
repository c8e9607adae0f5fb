/**
 * Boots a service the same way in production, in the demo and in integration tests: open the infrastructure,
 * create the Nest application with the NATS command transport (and HTTP when asked), start it, and close everything
 * in reverse order on shutdown.
 */
import 'reflect-metadata';
import type { DynamicModule, INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { MicroserviceOptions } from '@nestjs/microservices';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import { commandSubject, type ServiceHealthV1 } from '@ormuz/contracts';
import { startTracing } from '@ormuz/tracing';
import { NatsRpcServer, OrmuzExceptionFilter } from './nats-rpc.server.js';
import {
  migratedSchemas,
  openInfrastructure,
  type Infrastructure,
  type InfrastructureOptions,
} from './infrastructure.js';
import { MAX_RPC_BYTES } from './rpc.js';
import { PinoNestLogger } from './logger.js';
import { ProbeServer } from './probe-server.js';
import { ReadinessCheck } from './readiness.js';
import { StartPhases } from './start-phases.js';

export interface ServiceOptions extends InfrastructureOptions {
  /** The root module, given the opened infrastructure. */
  readonly module: (infra: Infrastructure) => DynamicModule;
  /** Serve HTTP on this port (0: any free port) as well as NATS commands. */
  readonly httpPort?: number;
  /** HTTP bind address. Default 127.0.0.1. */
  readonly httpHost?: string;
  /**
   * False when the service reads HTTP request bodies itself (the MCP gateway answers a malformed body as JSON-RPC,
   * which a shared parser in front of its routes could not). Default true: JSON bodies up to a command's size.
   */
  readonly httpJsonBodies?: boolean;
}

export interface RunningService {
  readonly infra: Infrastructure;
  readonly app: INestApplicationContext;
  /** The HTTP URL when the service serves HTTP. */
  readonly httpUrl: string | undefined;
  /** The probes' URL (`/livez`, `/readyz`, `/metrics`) when `HEALTH_PORT` is set. */
  readonly healthUrl: string | undefined;
  close(): Promise<void>;
}

/** Starts a service. Throws the dependency's own error (NatsUnavailableError, PostgresUnavailableError) on failure. */
export async function startService(opts: ServiceOptions): Promise<RunningService> {
  const infra = await openInfrastructure(opts);
  const logger = new PinoNestLogger(infra.logger);
  const strategy = new NatsRpcServer(infra.nc, opts.config.namespace, opts.service, infra.logger, infra.authenticator);
  // Listening starts every module (their consumers among them) before it serves commands.
  const phases = new StartPhases(infra.logger);
  let app: INestApplicationContext;
  let httpUrl: string | undefined;
  try {
    if (opts.httpPort !== undefined) {
      // The adapter Nest would load by name anyway, passed explicitly so the import (and the dependency) is visible.
      const web = await phases.run('Nest: create the modules', () =>
        NestFactory.create<NestExpressApplication>(opts.module(infra), new ExpressAdapter(), {
          logger,
          abortOnError: false,
          bodyParser: opts.httpJsonBodies ?? true,
        }),
      );
      // Every JSON body becomes a command, so it may be as large as a command (Express's default is 100 KB). Set
      // before the application starts, this parser takes the place of the one Nest would add.
      if (opts.httpJsonBodies ?? true) web.useBodyParser('json', { limit: MAX_RPC_BYTES });
      // Filters first: connectMicroservice binds its handlers immediately and inherits only what is set by then.
      web.useGlobalFilters(new OrmuzExceptionFilter());
      web.connectMicroservice<MicroserviceOptions>({ strategy }, { inheritAppConfig: true });
      web.enableShutdownHooks();
      await phases.run('Nest: start the modules, serve NATS commands and HTTP', async () => {
        await web.startAllMicroservices();
        await web.listen(opts.httpPort!, opts.httpHost ?? '127.0.0.1');
      });
      const address = web.getHttpServer().address() as { port: number };
      httpUrl = `http://${opts.httpHost ?? '127.0.0.1'}:${address.port}`;
      infra.endpoints.http = httpUrl;
      app = web;
    } else {
      const ms = await phases.run('Nest: create the modules', () =>
        NestFactory.createMicroservice<MicroserviceOptions>(opts.module(infra), {
          strategy,
          logger,
          abortOnError: false,
        }),
      );
      ms.useGlobalFilters(new OrmuzExceptionFilter());
      await phases.run('Nest: start the modules, serve NATS commands', () => ms.listen());
      app = ms;
    }
  } catch (err) {
    await infra.close();
    throw err;
  }
  // Every service answers `health` once it is serving, so orchestrators can wait for readiness over NATS.
  infra.nc.subscribe(commandSubject(opts.config.namespace, opts.service, 'health'), {
    callback: (_err, msg) => {
      const health: ServiceHealthV1 = { service: opts.service, pid: process.pid, endpoints: infra.endpoints };
      msg.respond(JSON.stringify({ ok: true, data: health }));
    },
  });
  // The server has every subscription once it answers a ping: from here on, a request reaches this service.
  await infra.nc.flush();
  // Probes last: a pod is ready only once everything above serves.
  let probes: ProbeServer | undefined;
  const health = opts.config.health;
  if (health !== undefined) {
    try {
      const readiness = new ReadinessCheck(infra, opts.streams, health);
      probes = await ProbeServer.listen(opts.service, readiness, infra.metrics, health.port, health.host);
    } catch (err) {
      await app.close();
      await infra.close();
      throw new Error(`the probes cannot listen on ${health.host}:${health.port} (HEALTH_PORT): ${String(err)}`, {
        cause: err,
      });
    }
    infra.endpoints.health = probes.url;
  }
  infra.logger.info({ namespace: opts.config.namespace, endpoints: infra.endpoints }, `${opts.service} ready`);
  // Closing twice (a test that stops a replica early, then its teardown) waits for the first close.
  let closing: Promise<void> | undefined;
  return {
    infra,
    app,
    httpUrl,
    healthUrl: probes?.url,
    close() {
      closing ??= (async () => {
        // Probes first, so that an orchestrator stops sending work before the rest goes.
        await probes?.close();
        await app.close();
        await infra.close();
      })();
      return closing;
    },
  };
}

/**
 * Process entry point: `node main.js` runs the service until SIGTERM/SIGINT; `node main.js migrate` applies the
 * service's migrations and declares its streams, then exits. Start-up failures print one clear line and exit 1.
 */
export async function runServiceMain(
  opts: ServiceOptions,
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  try {
    if (argv[0] === 'migrate') {
      const infra = await openInfrastructure(opts);
      await infra.close();
      const database = decodeURIComponent(new URL(opts.config.databaseUrl).pathname.slice(1));
      const schemas = migratedSchemas(opts).map((s) => s.schema);
      process.stdout.write(
        `${opts.service}: schemas ${schemas.join(', ')} of database ${database} ` +
          `(namespace ${opts.config.namespace}) are up to date\n`,
      );
      return;
    }
    // Traces only when the OTEL_* variables ask for them; then for the whole process, before anything starts.
    const tracing = startTracing(opts.service);
    const running = await startService(opts);
    let closing = false;
    const stop = async (signal: string) => {
      if (closing) return;
      closing = true;
      running.infra.logger.info({ signal }, 'shutting down');
      await running.close().catch((err) => running.infra.logger.error({ err }, 'shutdown failed'));
      // What the exporter still holds goes out before the process does.
      await tracing?.shutdown().catch((err) => running.infra.logger.error({ err }, 'trace export failed'));
      process.exit(0);
    };
    process.once('SIGTERM', () => void stop('SIGTERM'));
    process.once('SIGINT', () => void stop('SIGINT'));
  } catch (err) {
    process.stderr.write(`${opts.service}: cannot start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
