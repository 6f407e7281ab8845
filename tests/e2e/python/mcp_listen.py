"""The official Python MCP client (the `mcp` package, pinned in requirements.txt)
against a running node, driven by tests/e2e/mcp-python.test.mjs.

Connects in 2026-07-28 with the bearer token MCP_TOKEN, reads the resource
MCP_URI, then listens to it: prints `acknowledged <uris>` once the server's
acknowledgement arrives (the driver then delivers mail), and `updated <uri>`
for the first change told, then exits. Fails (non-zero) if nothing arrives
within 15 seconds.
"""

import asyncio
import os
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ResourceUpdated


async def main() -> None:
    url, token, uri = os.environ["MCP_URL"], os.environ["MCP_TOKEN"], os.environ["MCP_URI"]
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as client:
            read = await client.read_resource(uri)
            print(f"read {read.contents[0].uri} {read.contents[0].mime_type}", flush=True)
            async with client.listen(resource_subscriptions=[uri]) as subscription:
                honored = subscription.honored.resource_subscriptions or []
                print(f"acknowledged {' '.join(honored)}", flush=True)
                async with asyncio.timeout(15):
                    async for event in subscription:
                        if isinstance(event, ResourceUpdated):
                            print(f"updated {event.uri}", flush=True)
                            return


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as error:  # the driver reads why from stderr
        print(f"failed: {error!r}", file=sys.stderr, flush=True)
        sys.exit(1)
