"""The security headers the resolver sends: what every response carries, and what its HTML
pages add (templating's ``html_page`` and the API docs page).

Every response, the resolution redirect included, carries ``X-Content-Type-Options: nosniff``:
a browser takes each body for the media type it is labelled with (a JSON record, a text/uri-list
of registrants' URLs), never for HTML or script it sniffed in it. It costs one header.

Pages add a ``Content-Security-Policy`` that allows the pages' own stylesheets and scripts
(``/static``) and nothing inline, so that text a registrant stored can never run, even if an
escape were missed; ``frame-ancestors 'none'`` (the pages are never framed: nothing here is
made to be embedded, and the search form and the docs' "Try it out", which takes a token, are
what clickjacking would aim at; ``'self'`` would serve no page of ours); and
``Referrer-Policy: strict-origin-when-cross-origin``: the sites a record's page links to learn
that a visitor came from this resolver, which their publishers count, but not which record or
search, as a path and query (``/search?q=...``) never leave the origin. It is the modern
browsers' default, said outright for those whose default sends more. The resolution redirect
carries no ``Referrer-Policy``: the referrer its target sees is the linking page's, under that
page's policy, and the resolver does not change it.

>>> PAGE_HEADERS["Referrer-Policy"]
'strict-origin-when-cross-origin'
>>> "'unsafe-inline'" in PAGE_HEADERS["Content-Security-Policy"]
False
"""

# Swagger UI (/docs) fetches /openapi.json and, trying an operation, the API (connect-src);
# its stylesheet draws icons from data: URIs (img-src). No page submits a form elsewhere.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
PAGE_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "Referrer-Policy": "strict-origin-when-cross-origin",
}
NOSNIFF = (b"x-content-type-options", b"nosniff")  # on every response (web/access_log.py)
