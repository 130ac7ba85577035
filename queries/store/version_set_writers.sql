UPDATE versions SET writers = :writers WHERE id = :id
