"""grobid"""
