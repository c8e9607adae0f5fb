/**
 * `ormuz mcp`: an MCP server on stdio for clients that only start local servers, relaying every message to the MCP
 * gateway over Streamable HTTP with the agent's API key. The relay is the SDK's two transports back to back: what
 * the client writes on stdin goes to the gateway as the client sent it, what the gateway answers (responses,
 * notifications, its requests) goes to stdout. The gateway does everything else (sessions, the gate, results); the
 * relay adds only the session id and protocol version the HTTP transport must repeat, and a JSON-RPC error for a
 * request it could not deliver, so that the client is never left waiting. The transports are the v2 SDK's, whose
 * HTTP client also sends a stateless 2026-07-28 request (its `_meta` envelope names the revision) with the headers
 * that revision requires (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, read from the message itself): a client
 * of either revision is relayed.
 */
import { StreamableHTTPClientTransport, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

export interface StdioRelayOptions {
  /** The gateway's endpoint, e.g. `http://127.0.0.1:8083/mcp`. */
  readonly url: URL;
  /** The agent's API key (`ormz_…`). */
  readonly apiKey: string;
  /** The device the session acts on (`Ormuz-Device`), when it acts on one. */
  readonly device?: string;
  /** Where to say what went wrong: never stdout, which is the protocol's. */
  readonly log: (line: string) => void;
}

/** Runs the relay until either side closes; resolves then. */
export async function runStdioRelay(options: StdioRelayOptions): Promise<void> {
  const headers: Record<string, string> = { authorization: `Bearer ${options.apiKey}` };
  if (options.device) headers['ormuz-device'] = options.device;
  const http = new StreamableHTTPClientTransport(options.url, { requestInit: { headers } });
  const stdio = new StdioServerTransport();
  const initializing = new Set<string | number>();
  let closed = false;
  const done = new Promise<void>((resolve) => {
    const close = () => {
      if (closed) return;
      closed = true;
      void Promise.allSettled([http.close(), stdio.close()]).then(() => resolve());
    };
    http.onclose = close;
    stdio.onclose = close;
  });

  stdio.onmessage = (message: JSONRPCMessage) => {
    if ('method' in message && message.method === 'initialize' && 'id' in message) initializing.add(message.id);
    http.send(message).catch((err: unknown) => {
      const reason = err instanceof Error ? err.message : String(err);
      options.log(`ormuz mcp: the gateway did not take a message: ${reason}`);
      if ('method' in message && 'id' in message) {
        void stdio.send({
          jsonrpc: '2.0',
          id: message.id,
          error: { code: -32000, message: `Ormuz gateway: ${reason}` },
        });
      }
    });
  };
  http.onmessage = (message: JSONRPCMessage) => {
    // The HTTP transport repeats the negotiated version on every later request, as the SDK's client would set it.
    if ('result' in message && initializing.delete(message.id)) {
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === 'string') http.setProtocolVersion(version);
    }
    void stdio.send(message);
  };
  http.onerror = (err) => options.log(`ormuz mcp: ${err.message}`);
  stdio.onerror = (err) => options.log(`ormuz mcp: ${err.message}`);

  await http.start();
  await stdio.start();
  // stdin's end is the client going away: end the gateway session too.
  process.stdin.once('end', () => {
    void http
      .terminateSession()
      .catch(() => undefined)
      .finally(() => void Promise.allSettled([http.close(), stdio.close()]));
  });
  await done;
}
