//! Records and row formats (being written).
