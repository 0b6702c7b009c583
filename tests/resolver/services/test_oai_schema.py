"""Our ``/oai`` answers are valid by the official OAI-PMH 2.0 and ``oai_dc`` schemas.

The schemas are published ones, kept in ``tests/resolver/data/xsd`` (see its SOURCE.md); lxml
resolves each ``schemaLocation`` to the copy there and never goes to the network. OAI-PMH.xsd
takes a record's metadata with ``processContents="strict"``, so ``oai_dc`` is checked too.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from lxml import etree
from resolver_support import Resolver

from urnkit.resolver.settings import Settings

XSD = Path(__file__).parent.parent / "data" / "xsd"
OAI = "{http://www.openarchives.org/OAI/2.0/}"
_DRIVER = b"""<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:import namespace="http://www.openarchives.org/OAI/2.0/" schemaLocation="OAI-PMH.xsd"/>
  <xs:import namespace="http://www.openarchives.org/OAI/2.0/oai_dc/" schemaLocation="oai_dc.xsd"/>
</xs:schema>"""


class _Local(etree.Resolver):  # type: ignore[misc]  # lxml ships no types
    """Each schema by its file name from ``XSD``; anything else is not found."""

    def resolve(self, system_url: str, public_id: str, context: object) -> object:
        local = XSD / system_url.rsplit("/", 1)[-1]
        assert local.is_file(), f"no local copy of {system_url}"
        return self.resolve_filename(str(local), context)


@pytest.fixture(scope="module")
def schema() -> etree.XMLSchema:
    parser = etree.XMLParser(no_network=True)
    parser.resolvers.add(_Local())
    driver = etree.fromstring(_DRIVER, parser, base_url=(XSD / "driver.xsd").as_uri())
    return etree.XMLSchema(etree.ElementTree(driver))


def _valid(schema: etree.XMLSchema, resolver: Resolver, **arguments: str) -> etree._Element:
    response = httpx.get(resolver.base_url + "/oai", params=arguments)
    assert response.status_code == 200
    root = etree.fromstring(response.content)
    assert schema.validate(root), (schema.error_log, response.text)
    return root


def test_the_schemas_refuse_what_they_should(schema: etree.XMLSchema) -> None:
    # The check can fail: a datestamp with an offset is not UTCdatetime, a DC element
    # outside the 15 is not oai_dc (OAI-PMH 2.0 §3.3.1; oai_dc.xsd).
    identify = (
        '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
        "<responseDate>2026-01-01T00:00:00+02:00</responseDate>"
        '<request verb="Identify">http://x.example/oai</request>'
        "<Identify><repositoryName>r</repositoryName><baseURL>http://x.example/oai</baseURL>"
        "<protocolVersion>2.0</protocolVersion><adminEmail>a@b.example</adminEmail>"
        "<earliestDatestamp>2026-01-01T00:00:00Z</earliestDatestamp>"
        "<deletedRecord>no</deletedRecord><granularity>YYYY-MM-DDThh:mm:ssZ</granularity>"
        "</Identify></OAI-PMH>"
    )
    assert schema.validate(etree.fromstring(identify))
    assert not schema.validate(etree.fromstring(identify.replace(":00Z<", ":00+02:00<")))
    dc = (
        '<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/"'
        ' xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:{0} xml:lang="fi">x</dc:{0}></oai_dc:dc>'
    )
    assert schema.validate(etree.fromstring(dc.format("title")))
    assert not schema.validate(etree.fromstring(dc.format("abstract")))


def test_identify_with_the_default_admin_email_is_valid(
    schema: etree.XMLSchema, resolver: Resolver
) -> None:
    root = _valid(schema, resolver, verb="Identify")
    assert root.findtext(f"{OAI}Identify/{OAI}adminEmail") == Settings().oai_admin_email


def test_list_records_and_get_record_in_oai_dc_are_valid(
    schema: etree.XMLSchema, resolver: Resolver, api: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}xsd"
    record = {
        "urn": urn,
        "locations": [{"url": "https://example.org/xsd?a=1&b=2"}],
        "metadata": {"title": "Ääni & <kuva>", "creator": "Virtanen, Aino"},
    }
    response = api.post("/api/v1/urns:batch", json={"records": [record]})
    assert response.status_code == 200, response.text
    listed = _valid(schema, resolver, verb="ListRecords", metadataPrefix="oai_dc", set="fi:test")
    assert listed.findall(f"{OAI}ListRecords/{OAI}record")
    got = _valid(schema, resolver, verb="GetRecord", metadataPrefix="oai_dc", identifier=urn)
    assert got.findtext(f"{OAI}GetRecord/{OAI}record/{OAI}header/{OAI}identifier") == urn
    for arguments in (
        {"verb": "ListMetadataFormats"},
        {"verb": "ListSets"},
        {"verb": "ListIdentifiers", "metadataPrefix": "oai_dc"},
        {"verb": "GetRecord", "metadataPrefix": "oai_dc", "identifier": "urn:nbn:fi:none-x"},
    ):
        _valid(schema, resolver, **arguments)
