import dgram from 'node:dgram';
import net from 'node:net';

/** A question the nameserver was asked: the name (lower case) and its type (1 = A, 28 = AAAA). */
export interface Query {
  name: string;
  type: number;
}

export interface TestNameserver {
  /** `127.0.0.1:<port>`, as DNS_SERVERS takes it. */
  address: string;
  /** Every question asked over UDP, in order. */
  queries: Query[];
  /** TCP connections made to it (a resolver falls back to TCP after a truncated answer). */
  tcpConnections: number;
  /** Names answered with an A record (lower case → IPv4); every other name is never answered. Change it at will. */
  answers: Map<string, string>;
  /** Answered names whose AAAA questions go unanswered all the same (a broken IPv6 setup). */
  silentAaaa: Set<string>;
  /** Questions about names under `suffix` (e.g. `.slow.test`). */
  asked(suffix: string): Query[];
  /** Stops answering and closes both sockets (and every TCP connection it accepted). */
  close(): Promise<void>;
}

/** The first question of a DNS message: its name, type, and where the question ends. */
function question(message: Buffer): (Query & { end: number }) | null {
  if (message.length < 12 || message.readUInt16BE(4) < 1) return null;
  const labels: string[] = [];
  let at = 12;
  while (at < message.length) {
    const length = message[at]!;
    if (length === 0) break;
    labels.push(message.subarray(at + 1, at + 1 + length).toString('latin1'));
    at += 1 + length;
  }
  if (at + 5 > message.length) return null;
  return { name: labels.join('.').toLowerCase(), type: message.readUInt16BE(at + 1), end: at + 5 };
}

/** The answer to `query`: its A record when asked for one, else no records (NOERROR). */
function answer(message: Buffer, asked: Query & { end: number }, address: string): Buffer {
  const header = Buffer.alloc(12);
  message.copy(header, 0, 0, 2); // the id
  header.writeUInt16BE(0x8180, 2); // a response, recursion desired and available, NOERROR
  header.writeUInt16BE(1, 4);
  const records = asked.type === 1 ? 1 : 0;
  header.writeUInt16BE(records, 6);
  const parts = [header, message.subarray(12, asked.end)];
  if (records) {
    const record = Buffer.alloc(16);
    record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    record.writeUInt16BE(1, 2); // A
    record.writeUInt16BE(1, 4); // IN
    record.writeUInt32BE(60, 6); // TTL
    record.writeUInt16BE(4, 10);
    address.split('.').forEach((octet, i) => record.writeUInt8(Number(octet), 12 + i));
    parts.push(record);
  }
  return Buffer.concat(parts);
}

/**
 * A nameserver on loopback (UDP and TCP on one port) that answers the names in `answers` and never
 * answers any other: a name whose nameserver does not respond, as an attacker's domain can be made to do.
 * Tests and benches share it (test/helpers/nameserver.ts closes it when a test ends).
 */
export async function startNameserver(answers: Record<string, string> = {}): Promise<TestNameserver> {
  for (let tries = 0; ; tries++) {
    const udp = dgram.createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(0, '127.0.0.1', () => resolve());
    });
    const port = udp.address().port;
    const sockets = new Set<net.Socket>();
    const tcp = net.createServer((socket) => {
      // Accepted and never answered; destroyed at clean-up.
      server.tcpConnections++;
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    });
    const listening = await new Promise<boolean>((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!listening) {
      udp.close();
      if (tries < 10) continue;
      throw new Error('no port free for both UDP and TCP');
    }
    const server: TestNameserver = {
      address: `127.0.0.1:${port}`,
      queries: [],
      tcpConnections: 0,
      answers: new Map(Object.entries(answers).map(([name, ip]) => [name.toLowerCase(), ip])),
      silentAaaa: new Set(),
      asked: (suffix) => server.queries.filter((q) => q.name.endsWith(suffix.toLowerCase())),
      close: async () => {
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => tcp.close(() => resolve()));
        await new Promise<void>((resolve) => udp.close(() => resolve()));
      },
    };
    udp.on('message', (message, from) => {
      const asked = question(message);
      if (!asked) return;
      server.queries.push({ name: asked.name, type: asked.type });
      const address = server.answers.get(asked.name);
      if (asked.type === 28 && server.silentAaaa.has(asked.name)) return;
      if (address !== undefined) udp.send(answer(message, asked, address), from.port, from.address);
    });
    return server;
  }
}
