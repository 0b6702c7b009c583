"""Resolution's hot answers, kept by each server process: the headers of the redirects it gave,
given again without the lookup while nothing has been committed to the database since
(:meth:`~urnkit.resolver.store.Store.change_mark`). The database stays the only copy of
everything: a commit by any server forgets every kept answer at the next request."""

from collections.abc import Hashable

Headers = list[tuple[bytes, bytes]]

MOST_ANSWERS = 10_000  # kept per server process; when full, all are forgotten and kept anew


class HotAnswers:
    """Answers (the headers of a redirect, and the prefix the statistics count it by) by
    request, valid while the database's change mark is the one they were built under.

    >>> answers = HotAnswers()
    >>> answers.get("/urn:nbn:fi-1", 7) is None
    True
    >>> answers.put("/urn:nbn:fi-1", 7, [(b"location", b"https://example.org/")], "fi")
    >>> answers.get("/urn:nbn:fi-1", 7)
    ([(b'location', b'https://example.org/')], 'fi')
    >>> answers.get("/urn:nbn:fi-1", 8) is None  # something was committed meanwhile
    True
    """

    def __init__(self, most: int = MOST_ANSWERS) -> None:
        self._most = most
        self._mark: int | None = None
        self._answers: dict[Hashable, tuple[Headers, str]] = {}

    def get(self, request: Hashable, mark: int) -> tuple[Headers, str] | None:
        """The answer kept for ``request`` under change mark ``mark``, if any; a new mark
        forgets every answer kept."""
        if mark != self._mark:
            self._answers.clear()
            self._mark = mark
            return None
        return self._answers.get(request)

    def put(self, request: Hashable, mark: int, headers: Headers, prefix: str) -> None:
        """Keep ``headers`` and ``prefix`` for ``request``, built from what the database held
        under ``mark`` (read before the lookup: an answer read after a commit is forgotten
        with the answers of before)."""
        if mark != self._mark:
            return
        if len(self._answers) >= self._most:
            self._answers.clear()
        self._answers[request] = (headers, prefix)
