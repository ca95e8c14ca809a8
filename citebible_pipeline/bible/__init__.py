"""The WEB corpus: canon data, the reference parser, the USFM parser and the verse/chapter builder."""
