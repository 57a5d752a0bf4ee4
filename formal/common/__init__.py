"""Reusable formal-verification pieces shared by every core's harnesses."""
