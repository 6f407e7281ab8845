"""The official Python MCP client's OAuth provider (`mcp.client.auth.OAuthClientProvider`,
the `mcp` package pinned in requirements.txt) against a running node, driven by
tests/e2e/oauth-python.test.mjs.

It knows only MCP_URL, the node's /mcp, and the scope it wants, MCP_SCOPE: it is
refused at /mcp, discovers the protected resource and its authorization server,
registers itself with a loopback redirect URI it listens on, and sends a person's
browser to the consent by printing `authorize <url>` (the driver plays the person).
Its listener catches the code the browser brings back; the provider redeems it, and
the client lists its tools, reads the body of MESSAGE_ID in MAILBOX_ID with
`get_message_body`, and tries `list_messages` on the same mailbox. Then its access
token's lifetime passes, and its next call refreshes the token first, and reads
again. Prints one line for each thing the driver checks:

    listening <redirect uri>
    sent <method> <path> <status> [<grant_type>]   every request the client sent
    registered <the registration's JSON>
    authorize <authorization URL>
    tokens <the token response's JSON, as the provider stored it>
    tools <tool names, sorted>
    body <the tool's structured content, as JSON>
    refused <tool> <JSON-RPC error code> <message>
    expired                                       the access token's lifetime has passed
    done

Fails (non-zero, the reason on stderr) if any step does, or if no person answers
within 60 seconds.
"""

import asyncio
import json
import os
import sys
import time
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.shared.exceptions import MCPError

CLIENT_NAME = "Python SDK (e2e)"


def say(*words: str) -> None:
    print(*words, flush=True)


class MemoryStorage:
    """What a CLI keeps for one run: its registration and its tokens, told as they are saved."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        say("tokens", tokens.model_dump_json(exclude_none=True))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info
        say("registered", client_info.model_dump_json(exclude_none=True))


class Loopback:
    """The client's redirect target (RFC 8252 §7.3): a listener on 127.0.0.1 that takes
    the first authorization response sent to /callback and tells the browser it is done."""

    def __init__(self) -> None:
        self.answer: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()
        self.server: asyncio.Server | None = None
        self.uri = ""

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        self.uri = f"http://127.0.0.1:{port}/callback"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = (await reader.readline()).decode("latin-1")
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass  # the headers say nothing the client needs
            target = urlsplit(request_line.split(" ")[1])
            if target.path == "/callback" and not self.answer.done():
                self.answer.set_result({name: values[0] for name, values in parse_qs(target.query).items()})
            page = b'<!doctype html><title>Signed in</title><link rel="icon" href="data:,"><p>You can close this window.</p>'
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\n"
                + f"content-length: {len(page)}\r\nconnection: close\r\n\r\n".encode()
                + page
            )
            await writer.drain()
        finally:
            writer.close()

    async def code(self) -> AuthorizationCodeResult:
        """The code the person's browser brought back, with its state and issuer."""
        async with asyncio.timeout(60):
            answer = await self.answer
        if "error" in answer:
            raise RuntimeError(f"the authorization was refused: {answer}")
        return AuthorizationCodeResult(code=answer["code"], state=answer.get("state"), iss=answer.get("iss"))

    def close(self) -> None:
        if self.server:
            self.server.close()


async def told(response: httpx2.Response) -> None:
    """Prints every request the client sends (the provider's own included) and its status."""
    request = response.request
    words = [request.method, request.url.path, str(response.status_code)]
    if request.url.path.endswith("/token"):
        words += parse_qs(request.content.decode()).get("grant_type", [])
    say("sent", *words)


async def main() -> None:
    url, mailbox, message = os.environ["MCP_URL"], os.environ["MAILBOX_ID"], os.environ["MESSAGE_ID"]
    loopback = Loopback()
    await loopback.start()
    say("listening", loopback.uri)

    async def send_the_browser(authorization_url: str) -> None:
        say("authorize", authorization_url)

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name=CLIENT_NAME,
            redirect_uris=[loopback.uri],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
            # What it needs, as a client asks for scopes (mcp 2.3.0 replaces it with what
            # discovery offers: see oauth-python.test.mjs).
            scope=os.environ["MCP_SCOPE"],
        ),
        storage=MemoryStorage(),
        redirect_handler=send_the_browser,
        callback_handler=loopback.code,
    )
    try:
        async with httpx2.AsyncClient(auth=provider, event_hooks={"response": [told]}) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                tools = await client.list_tools()
                say("tools", *sorted(tool.name for tool in tools.tools))
                body = await client.call_tool("get_message_body", {"mailbox_id": mailbox, "receipt_id": message})
                if body.is_error:
                    raise RuntimeError(f"get_message_body failed: {body.model_dump_json()}")
                say("body", json.dumps(body.structured_content))
                try:
                    answer = await client.call_tool("list_messages", {"mailbox_id": mailbox})
                    say("answered", "list_messages", answer.model_dump_json())
                except MCPError as refusal:
                    say("refused", "list_messages", str(refusal.code), refusal.message)

                # The node's access tokens live 15 minutes; the provider refreshes one
                # only once its own clock says it has expired. Here those minutes pass.
                provider.context.token_expiry_time = time.time() - 1
                say("expired")
                again = await client.call_tool("get_message_body", {"mailbox_id": mailbox, "receipt_id": message})
                if again.is_error:
                    raise RuntimeError(f"get_message_body after the refresh failed: {again.model_dump_json()}")
                say("body", json.dumps(again.structured_content))
        say("done")
    finally:
        loopback.close()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as error:  # the driver reads why from stderr
        print(f"failed: {error!r}", file=sys.stderr, flush=True)
        sys.exit(1)
