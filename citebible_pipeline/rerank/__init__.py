"""The learned precision stage: pools from the query module, two trained rerankers, their store."""
