/**
 * What every CLI command needs: where NATS is, which namespace, how to print. Read once from options and env.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '@ormuz/event-log';
import { callService, loadBaseConfig, type BaseConfig } from '@ormuz/service-kit';

export interface GlobalOptions {
  readonly json?: boolean;
  readonly nats?: string;
  readonly namespace?: string;
}

export class CliContext {
  private connection: NatsConnection | undefined;
  readonly config: BaseConfig;

  constructor(readonly options: GlobalOptions) {
    this.config = loadBaseConfig({
      ...process.env,
      ...(options.nats ? { NATS_URL: options.nats } : {}),
      ...(options.namespace ? { ORMUZ_NAMESPACE: options.namespace } : {}),
    });
  }

  async nc(): Promise<NatsConnection> {
    this.connection ??= await connectNats({ url: this.config.natsUrl, name: 'ormuz-cli' });
    return this.connection;
  }

  /** Sends a command to a service and returns its data; remote errors are thrown with their code. */
  async call<T>(service: string, name: string, body: unknown, timeoutMs = 10_000): Promise<T> {
    return callService<T>(await this.nc(), this.config.namespace, service, name, body, timeoutMs);
  }

  /** Prints `data` as one JSON line with --json, otherwise with the human renderer. */
  print(data: unknown, human: (data: never) => string): void {
    process.stdout.write(this.options.json ? `${JSON.stringify(data)}\n` : `${human(data as never)}\n`);
  }

  async close(): Promise<void> {
    await this.connection?.drain().catch(() => undefined);
  }
}

/** Parses a JSON option with a message that names the option. */
export function parseJsonOption(name: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${name} is not valid JSON (${(err as Error).message}). Quote it for your shell, e.g. --${name} '{"k":"v"}'.`);
  }
}
