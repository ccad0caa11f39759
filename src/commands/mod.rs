pub mod capture;
pub mod load;
pub mod options;
pub mod read;
