"""Forwarding to national resolvers: a table from country code to resolver URL template.

RFC 8458 §4.4: the country code of a URN:NBN's prefix leads to the national resolver. A row
per country (ISO 3166-1 alpha-2, lower case, as URN:NBN prefixes begin), its resolver's URL
template (``{urn}`` where the URN goes), the last health check's outcome, and a note. It is
data: admins edit it (``PUT``/``DELETE /api/v1/forwarding/{country}``, ``urnkit admin
forwarding``); the rows below are a starting point, each URL form from its resolver's
published examples.

Revision ID: forwarding
Revises: links
Create Date: 2026-11-23
"""

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "forwarding"
down_revision = "links"
branch_labels = None
depends_on = None

_TIME = sa.DateTime(timezone=True)

# (country, URL template, note). Where each URL form comes from:
_NATIONAL_RESOLVERS = [
    # urn.fi (National Library of Finland): "http://urn.fi/URN:NBN:fi-fe…", the URN as the path.
    ("fi", "https://urn.fi/{urn}", "National Library of Finland"),
    # nbn-resolving.org (Deutsche Nationalbibliothek) serves de, at and ch, and Slovenia's
    # URN:NBNs (dLib.si links "nbn-resolving.de/urn:nbn:si:…"): the URN as the path.
    ("de", "https://nbn-resolving.org/{urn}", "Deutsche Nationalbibliothek"),
    ("at", "https://nbn-resolving.org/{urn}", "Deutsche Nationalbibliothek, for Austria"),
    ("ch", "https://nbn-resolving.org/{urn}", "Deutsche Nationalbibliothek, for Switzerland"),
    ("si", "https://nbn-resolving.org/{urn}", "Deutsche Nationalbibliothek, for Slovenia"),
    # urn.kb.se (National Library of Sweden): "http://urn.kb.se/resolve?urn=urn:nbn:se:…",
    # the form DiVA prints under every record; the URN as a query value.
    ("se", "https://urn.kb.se/resolve?urn={urn}", "National Library of Sweden"),
    # urn.nb.no (National Library of Norway): "http://urn.nb.no/URN:NBN:no-nb_…", the path.
    ("no", "https://urn.nb.no/{urn}", "National Library of Norway"),
    # CZIDLO (National Library of the Czech Republic): "resolver.nkp.cz/urn:nbn:cz:…", the path.
    ("cz", "https://resolver.nkp.cz/{urn}", "National Library of the Czech Republic (CZIDLO)"),
    # KB, national library of the Netherlands: "persistent-identifier.nl/urn:nbn:nl:ui:…".
    ("nl", "https://persistent-identifier.nl/{urn}", "KB, national library of the Netherlands"),
    # Magazzini Digitali (Italy): "nbn.depositolegale.it/urn:nbn:it:…", the path.
    ("it", "https://nbn.depositolegale.it/{urn}", "Magazzini Digitali, Italy"),
    # National and University Library in Zagreb: "urn.nsk.hr/urn:nbn:hr:…", the path.
    ("hr", "https://urn.nsk.hr/{urn}", "National and University Library in Zagreb"),
    # National Széchényi Library: "nbn.urn.hu/N2L?urn:nbn:hu-…", RFC 2169's N2L query form.
    ("hu", "https://nbn.urn.hu/N2L?{urn}", "National Széchényi Library"),
]


def upgrade() -> None:
    forwarding = op.create_table(
        "forwarding",
        sa.Column("country", sa.String(2), primary_key=True),
        sa.Column("url_template", sa.Text, nullable=False),
        sa.Column("health", sa.String(10), nullable=False),
        sa.Column("checked", _TIME),
        sa.Column("detail", sa.Text),
        sa.Column("note", sa.Text),
        sa.Column("updated", _TIME, nullable=False),
    )
    moment = datetime.now(UTC)
    op.bulk_insert(
        forwarding,
        [
            {
                "country": country,
                "url_template": template,
                "health": "unknown",
                "note": note,
                "updated": moment,
            }
            for country, template, note in _NATIONAL_RESOLVERS
        ],
    )


def downgrade() -> None:
    op.drop_table("forwarding")
