UPDATE events SET count = :count, last = :last WHERE id = :id
