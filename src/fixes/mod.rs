pub mod edit;
