"""pytest-lsp drives the real `xeforge lsp` with VS Code's and Neovim's recorded client capabilities.

Run: .venv/bin/python -m pytest tests/lsp_py  (XEFORGE_BIN overrides target/debug/xeforge)
"""

import asyncio

import pytest_lsp
from conftest import xeforge_binary
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

URI = "file:///tmp/xeforge-pytest/kern.py"
KERNEL = """import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def run(x, n):
    k[(triton.cdiv(n, 128),)](x, n, BLOCK=128, num_warps=6, grf_mode='large')
"""


@pytest_lsp.fixture(
    params=["visual-studio-code", "neovim"],
    config=ClientServerConfig(server_command=[xeforge_binary(), "lsp"]),
)
async def client(request, lsp_client: LanguageClient):
    # The recorded profiles claim dynamic registration; answer it like an editor would.
    @lsp_client.feature(t.CLIENT_REGISTER_CAPABILITY)
    def _register(params):
        return None

    await lsp_client.initialize_session(t.InitializeParams(capabilities=client_capabilities(request.param), initialization_options={}))
    yield
    await lsp_client.shutdown_session()


async def diagnostics(client: LanguageClient):
    """The diagnostics for URI now: pulled when the client pulls, else pytest-lsp's store of the latest push."""
    caps = client.capabilities
    if caps and caps.text_document and caps.text_document.diagnostic:
        r = await client.text_document_diagnostic_async(t.DocumentDiagnosticParams(text_document=t.TextDocumentIdentifier(uri=URI)))
        return list(getattr(r, "items", None) or [])
    await asyncio.sleep(0.02)
    return list(client.diagnostics.get(URI, []))


async def test_diagnostics_appear_and_clear_when_fixed(client: LanguageClient):
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(text_document=t.TextDocumentItem(uri=URI, language_id="python", version=1, text=KERNEL))
    )
    for _ in range(100):
        items = await diagnostics(client)
        if any(d.code == "XF101" for d in items):
            break
    assert any(d.code == "XF101" and d.source == "xeforge" for d in items)

    line = KERNEL.splitlines().index("    k[(triton.cdiv(n, 128),)](x, n, BLOCK=128, num_warps=6, grf_mode='large')")
    col = KERNEL.splitlines()[line].index("num_warps=6") + len("num_warps=")
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=URI, version=2),
            content_changes=[
                t.TextDocumentContentChangePartial(
                    range=t.Range(start=t.Position(line=line, character=col), end=t.Position(line=line, character=col + 1)), text="8"
                )
            ],
        )
    )
    for _ in range(100):
        items = await diagnostics(client)
        if not any(d.code == "XF101" for d in items):
            break
    assert not any(d.code == "XF101" for d in items)


async def test_hover_and_devices(client: LanguageClient):
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(text_document=t.TextDocumentItem(uri=URI, language_id="python", version=1, text=KERNEL))
    )
    line = len(KERNEL.splitlines()) - 1
    col = KERNEL.splitlines()[line].index("num_warps") + 2
    hover = await client.text_document_hover_async(
        t.HoverParams(text_document=t.TextDocumentIdentifier(uri=URI), position=t.Position(line=line, character=col))
    )
    assert hover is not None and "work-group" in hover.contents.value
    devices = await client.protocol.send_request_async("xeforge/devices", {})
    assert any(d.id == "arc-pro-b70" for d in devices.devices)
