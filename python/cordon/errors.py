"""Errors of the cordon package."""
from typing import Optional


class CordonError(Exception):
    """cordon could not do what was asked (no report, a refused request).

    status: the HTTP status of a server's refusal (None for the CLI)."""

    def __init__(self, message: str, status: Optional[int] = None):
        super().__init__(message)
        self.status = status


class ServerUnreachable(CordonError, ConnectionError):
    """The server could not be reached, or its connection broke: the message
    names the socket path or the URL. Also a ConnectionError (OSError)."""
