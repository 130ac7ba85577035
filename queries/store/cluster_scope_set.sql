UPDATE temp.scope SET id = :id
