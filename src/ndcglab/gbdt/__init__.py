"""gbdt"""
