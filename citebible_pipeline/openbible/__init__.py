"""OpenBible.info imports: cross-references and topical votes, mapped onto the WEB's verse ids."""
