-- Changes whenever another connection commits to the recording (not this one).
PRAGMA data_version
