"""Text read as what it says: words and stems, values and their kinds, tool names in text, result text."""
