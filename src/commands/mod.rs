pub mod capture;
pub mod load;
pub mod read;
