// Which front thread serves a TCP connection, read from Linux's /proc: every front thread runs its
// own event loop with its own epoll instance, and the server's end of a connection is registered
// in exactly the one epoll of the thread that accepted it. The answer is that epoll's descriptor
// number: opaque, but the same for every connection of one front and different between fronts,
// which is all a test needs to show that several fronts served. The connection must be open.

import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/** The inode of the server-side socket of the connection serverPort ← clientPort, if open. */
function serverSocketInode(serverPort: number, clientPort: number): string | undefined {
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== '01') continue;
      const local = parseInt(fields[1].split(':').pop()!, 16);
      const remote = parseInt(fields[2].split(':').pop()!, 16);
      if (local === serverPort && remote === clientPort) return fields[9];
    }
  }
  return undefined;
}

/** The front (its epoll descriptor) that serves the open connection from `clientPort`. */
export function frontOf(pid: number, serverPort: number, clientPort: number): string {
  const inode = serverSocketInode(serverPort, clientPort);
  if (inode === undefined) throw new Error(`no open connection ${clientPort} → ${serverPort}`);
  const fds = readdirSync(`/proc/${pid}/fd`);
  const socketFd = fds.find((fd) => readLink(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`);
  if (socketFd === undefined) throw new Error(`the server holds no descriptor for socket ${inode}`);
  const owners = fds.filter((fd) => readLink(`/proc/${pid}/fd/${fd}`) === 'anon_inode:[eventpoll]')
    .filter((fd) => new RegExp(`^tfd:\\s+${socketFd}\\s`, 'm').test(readText(`/proc/${pid}/fdinfo/${fd}`)));
  if (owners.length !== 1) throw new Error(`socket ${socketFd} is in ${owners.length} event loops`);
  return owners[0];
}

function readLink(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return ''; // a descriptor closed while listing
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
