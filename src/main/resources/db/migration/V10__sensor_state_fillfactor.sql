-- A HOT update (V9) needs room for the new row version on the row's own page. Pages filled to 80% leave it; the
-- old versions are then pruned from the page as it is next written. Applies to pages written from now on: the rows
-- already stored move to such pages as they are updated.
ALTER TABLE sensor_state SET (fillfactor = 80);
