SELECT id FROM strings WHERE h = :h AND s = :s
