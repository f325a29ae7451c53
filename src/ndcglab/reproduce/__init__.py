"""reproduce"""
