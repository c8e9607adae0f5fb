import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { ApprovalStream } from './approval-stream.js';

/**
 * The live streams this process serves. An open event stream is an HTTP request that never finishes, and the server
 * waits for every request before it closes: so they are ended before the HTTP server is (pages reconnect elsewhere).
 */
@Injectable()
export class LiveStreams implements BeforeApplicationShutdown {
  private readonly open = new Set<ApprovalStream>();

  add(stream: ApprovalStream): void {
    this.open.add(stream);
    stream.onClose(() => this.open.delete(stream));
  }

  beforeApplicationShutdown(): void {
    for (const stream of [...this.open]) stream.close();
  }
}
