"""Runs SearXNG's web app (searx.webapp) with every non-loopback connection
refused, for tests and machines that must not reach the internet.

SearXNG's default engines search the public web: a query that selects one,
and engine set-up code run at start, would otherwise resolve and connect to
outside hosts. A Python audit hook refuses, before any packet is sent, name
lookups of hosts other than localhost and connections or datagrams to
addresses outside 127.0.0.0/8 and ::1. Each refusal is logged on stderr as
"searxng-loopback: refused HOST" so that a test can see what was attempted.
SearXNG itself runs unchanged: its settings come from SEARXNG_SETTINGS_PATH,
its address from SEARXNG_BIND_ADDRESS and SEARXNG_PORT, as in any SearXNG.

    python scripts/searxng/loopback.py   (scripts/searxng.sh start runs it)
"""

import ipaddress
import socket
import sys


def _name(host):
    """host as text: the socket module passes names as str or bytes."""
    if isinstance(host, bytes):
        return host.decode("ascii", "replace")
    return str(host)


def _local(host):
    """Whether host (a name, an address, or None for the wildcard) stays on
    this machine."""
    if host is None:
        return True
    host = _name(host).strip("[]")
    if host in ("", "localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _refuse(host):
    host = _name(host)
    print(f"searxng-loopback: refused {host}", file=sys.stderr, flush=True)
    raise PermissionError(f"searxng-loopback: {host} is not on loopback")


def _address_host(sock, address):
    """The host of a connect/sendto address, or None when the socket is not
    an IP socket (a Unix socket stays local)."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return None
    if isinstance(address, tuple) and address:
        return address[0]
    return address


def _hook(event, args):
    if event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
        sock, address = args[0], args[1]
        host = _address_host(sock, address)
        if host is not None and not _local(host):
            _refuse(host)
    elif event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr"):
        if not _local(args[0]):
            _refuse(args[0])


def main():
    sys.addaudithook(_hook)
    # Imported after the hook: importing the app initialises the engines.
    import searx.webapp  # pylint: disable=import-outside-toplevel

    searx.webapp.run()


if __name__ == "__main__":
    main()
