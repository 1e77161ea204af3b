import { readdir, readFile, readlink } from 'node:fs/promises';

/** The inodes of the sockets listening on TCP `port` (IPv4 and IPv6), from /proc/net (Linux). */
async function listeningInodes(port: number): Promise<Set<string>> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/u);
      // local_address is ADDRESS:PORT in hex; state 0A is LISTEN; the inode is the 10th field.
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A' && fields[9]) inodes.add(fields[9]);
    }
  }
  return inodes;
}

/**
 * Whether process `pid` itself holds a socket listening on TCP `port`: that the server answering
 * there is the one a test started, not someone else's that happened to hold the port.
 */
export async function listensOn(pid: number, port: number): Promise<boolean> {
  const inodes = await listeningInodes(port);
  if (inodes.size === 0) return false;
  const descriptors = await readdir(`/proc/${pid}/fd`).catch(() => []);
  for (const descriptor of descriptors) {
    const target = await readlink(`/proc/${pid}/fd/${descriptor}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/u.exec(target)?.[1];
    if (inode !== undefined && inodes.has(inode)) return true;
  }
  return false;
}
